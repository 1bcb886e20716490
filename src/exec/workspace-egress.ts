import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress } from '../egress/address-policy.ts';
import type { Admit } from '../egress/egress-proxy.ts';
import { egressAllowed, formatEgressRule, type EgressRule } from './backend.ts';

/**
 * A local workspace's egress rule, for the egress proxy in front of its sandbox: exactly its
 * allowlisted destinations. A host allowlisted by name must resolve to a public address: a name
 * that points at loopback, a private network or link-local (the control plane's own
 * neighbourhood) is refused, so DNS cannot turn an allowed name into a way back to Mesh. An IP
 * literal the operator allowlisted is taken as written (that is how a development setup allows a
 * loopback service).
 */
export function workspaceAdmission(rules: readonly EgressRule[]): Admit {
  return async (host, port) => {
    const named = formatEgressRule({ host, port });
    if (!egressAllowed(rules, host, port))
      return { refused: `egress to ${named} refused: it is not on this workspace's allowlist` };
    if (isIP(host) !== 0) return { address: host };
    let address: string;
    try {
      address = (await lookup(host)).address;
    } catch {
      return { refused: `${host} does not resolve`, unresolved: true };
    }
    if (classifyAddress(address) !== 'public')
      return { refused: `egress to ${named} refused: the name resolves to an internal address` };
    return { address };
  };
}
