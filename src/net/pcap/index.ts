export { type CaptureOptions, capturePackets, isCaptureAvailable, type PacketCapture } from './capture.js';
export { type ConnectionOnly, keepConnection } from './connection.js';
export { type PacketFlow, packetFlow, type TcpSegment, tcpSegment } from './decode.js';
export { captureFilter, connectionFilter, type Endpoint } from './filter.js';
export {
  LINK_TYPES,
  type PcapFile,
  type PcapHeader,
  type PcapRecord,
  PcapStreamSplitter,
  readPcap,
  readPcapHeader,
} from './format.js';
export { STREAM_WINDOW_BYTES, scrubPcap } from './scrub.js';
