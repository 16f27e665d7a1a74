/** An HTTP answer read whole: status, headers, the text, and the body parsed when it is JSON. */
export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}
