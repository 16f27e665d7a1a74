/**
 * The projector's linger as the bench's caller set it (`CAIRN_PROJECTOR_LINGER_MS`), so a run
 * can be repeated beside one with another value; the benches build their config from a fixed
 * environment otherwise.
 */
export function lingerFromEnvironment(): { CAIRN_PROJECTOR_LINGER_MS?: string } {
  const value = process.env.CAIRN_PROJECTOR_LINGER_MS;
  return value === undefined ? {} : { CAIRN_PROJECTOR_LINGER_MS: value };
}
