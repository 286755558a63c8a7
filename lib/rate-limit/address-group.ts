import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client a per-address limit or scope counts: an IPv4 address as is, an IPv6 address by its
 * /64 (one subscriber, one LAN: a client holds a whole /64 and can pick a new address in it at
 * will, so counting single IPv6 addresses would count nothing). An IPv4-mapped IPv6 address
 * (::ffff:192.0.2.1, as a dual-stack socket reports) is its IPv4 address. Anything else (no
 * address, `unknown`) is one group of its own text.
 */
export function addressGroup(ip: string | null | undefined): string {
  const address = (ip ?? '').trim().toLowerCase();
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address === '' ? 'unknown' : address;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 6).join(':') === '0:0:0:0:0:ffff';
  if (mapped) {
    const [high, low] = [groups[6]!, groups[7]!].map((g) => Number.parseInt(g, 16));
    return [high! >> 8, high! & 255, low! >> 8, low! & 255].join('.');
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, in lowercase hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  const withoutZone = address.split('%')[0]!;
  let text = withoutZone;
  // A trailing dotted IPv4 part is the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((g) => Number.parseInt(g, 16).toString(16));
}
