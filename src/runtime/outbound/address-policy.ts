import { BlockList, isIP } from "node:net";

/**
 * Which addresses an outbound request (a webhook delivery) may connect to. Every address outside
 * the public internet is refused — loopback, private (RFC 1918, CGNAT, IPv6 ULA), link-local, the
 * cloud metadata services, unspecified, multicast, broadcast and reserved — unless the operator
 * names that address or a CIDR holding it in `allow`: a server that calls URLs a requestor chose
 * must not become a way into the network it runs in (SSRF).
 */
export interface AddressPolicy {
  /** Null when `address` (an IP literal) may be called; otherwise why not, for the error and the log. */
  refusal(address: string): string | null;
}

/** Ranges refused by default, each with the name the refusal gives. */
const FORBIDDEN: ReadonlyArray<{ cidr: string; kind: string }> = [
  { cidr: "0.0.0.0/8", kind: "unspecified" },
  { cidr: "10.0.0.0/8", kind: "private (RFC 1918)" },
  { cidr: "100.64.0.0/10", kind: "private (CGNAT)" },
  { cidr: "127.0.0.0/8", kind: "loopback" },
  { cidr: "169.254.169.254/32", kind: "cloud metadata" },
  { cidr: "169.254.0.0/16", kind: "link-local" },
  { cidr: "172.16.0.0/12", kind: "private (RFC 1918)" },
  { cidr: "192.0.0.0/24", kind: "reserved" },
  { cidr: "192.168.0.0/16", kind: "private (RFC 1918)" },
  { cidr: "198.18.0.0/15", kind: "reserved (benchmarking)" },
  { cidr: "224.0.0.0/4", kind: "multicast" },
  { cidr: "240.0.0.0/4", kind: "reserved" },
  { cidr: "::/128", kind: "unspecified" },
  { cidr: "::1/128", kind: "loopback" },
  { cidr: "fd00:ec2::254/128", kind: "cloud metadata" },
  { cidr: "fc00::/7", kind: "private (ULA)" },
  { cidr: "fe80::/10", kind: "link-local" },
  { cidr: "ff00::/8", kind: "multicast" },
  { cidr: "64:ff9b::/96", kind: "NAT64 (may reach any IPv4 address)" },
];

/** Addresses whose verdict one policy keeps. */
const MAX_KEPT_VERDICTS = 256;

function family(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

function addRange(list: BlockList, cidr: string): void {
  const slash = cidr.lastIndexOf("/");
  const address = slash < 0 ? cidr : cidr.slice(0, slash);
  const kind = family(address);
  const prefix = slash < 0 ? (kind === "ipv6" ? 128 : 32) : Number(cidr.slice(slash + 1));
  list.addSubnet(address, prefix, kind);
}

/** Whether `entry` is an IP address or a CIDR (`10.1.2.0/24`, `fd00::/8`) an allow-list may name. */
export function isAddressOrCidr(entry: string): boolean {
  const slash = entry.lastIndexOf("/");
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return false;
  if (slash < 0) return true;
  const bits = entry.slice(slash + 1);
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 6 ? 128 : 32);
}

/** Strips the brackets of an IPv6 URL host and the IPv4-mapped prefix, so `::ffff:127.0.0.1` is judged as 127.0.0.1. */
export function plainAddress(address: string): string {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  return mapped?.[1] ?? bare;
}

/**
 * The policy refusing every non-public address except those in `allow` (addresses or CIDRs).
 * @throws Error naming an entry of `allow` that is neither.
 */
export function addressPolicy(allow: readonly string[] = []): AddressPolicy {
  const forbidden = FORBIDDEN.map(({ cidr, kind }) => {
    const list = new BlockList();
    addRange(list, cidr);
    return { list, kind };
  });
  const allowed = new BlockList();
  for (const entry of allow) {
    if (!isAddressOrCidr(entry)) throw new Error(`"${entry}" is not an IP address or CIDR`);
    addRange(allowed, entry);
  }
  const judge = (raw: string): string | null => {
    const address = plainAddress(raw);
    if (isIP(address) === 0) return `${raw} is not an IP address`;
    const kind = family(address);
    if (allowed.check(address, kind)) return null;
    const hit = forbidden.find(({ list }) => list.check(address, kind));
    return hit === undefined ? null : `${address} is a ${hit.kind} address (not in the operator's allow-list)`;
  };
  // A policy never changes, so an address's verdict is kept: a sender asks about the same few
  // addresses for every delivery, and each fresh answer walks every range. Bounded: forgotten
  // all at once when full.
  const verdicts = new Map<string, string | null>();
  return {
    refusal(raw) {
      const known = verdicts.get(raw);
      if (known !== undefined) return known;
      const verdict = judge(raw);
      if (verdicts.size >= MAX_KEPT_VERDICTS) verdicts.clear();
      verdicts.set(raw, verdict);
      return verdict;
    },
  };
}
