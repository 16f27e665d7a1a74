/** The projector leadership: who holds it, since which taking (epoch), until when. */
export interface ProjectorLeasesTable {
  name: string;
  holder: string;
  epoch: string;
  expires_at: Date;
}

declare module '../storage/database.ts' {
  interface Database {
    projector_leases: ProjectorLeasesTable;
  }
}
