import ipaddr from 'ipaddr.js';

/**
 * The client a per-address limit or scope counts: an IPv4 address as is, an IPv6 address by its
 * /64 (one subscriber, one LAN: a client holds a whole /64 and can pick a new address in it at
 * will, so counting single IPv6 addresses would count nothing). An IPv4-mapped IPv6 address
 * (::ffff:192.0.2.1, as a dual-stack socket reports) is its IPv4 address. Anything else (no
 * address, `unknown`) is one group of its own text.
 */
export function addressGroup(ip: string | null | undefined): string {
  const text = (ip ?? '').trim().toLowerCase();
  if (text === '') return 'unknown';
  // A zone (fe80::1%eth0) names the interface, not the client.
  const address = text.split('%')[0]!;
  if (!ipaddr.isValid(address)) return text;
  // process() turns an IPv4-mapped IPv6 address back into its IPv4 address.
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const groups = parsed.toNormalizedString().split(':');
  return `${groups.slice(0, 4).join(':')}::/64`;
}
