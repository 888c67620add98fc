export { ADDON_PATH, type IcmpAddon, loadIcmpAddon, type SocketType } from './addon.js';
export {
  type PingerOptions,
  type PingOptions,
  type PingOutcome,
  type PingReply,
  Pinger,
  type SocketPreference,
} from './pinger.js';
