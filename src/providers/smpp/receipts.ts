import type { DeliveryReceipt } from '../../channels/provider-port.js';
import type { SmscReceipt } from './receipt.js';

/** The parts of one concatenated message; its messageId is the first part's SMSC id. */
export interface PartGroup {
  readonly total: number;
  messageId: string | null;
  readonly ids: string[];
  readonly delivered: Set<string>;
}

/** How many part ids are remembered; the oldest are forgotten first (a receipt for one then passes as is). */
const MAX_PARTS_REMEMBERED = 20_000;

/**
 * Maps SMSC receipts to the messageId a send returned. A one-part message's receipt passes as is. The parts of
 * a concatenated message each get a receipt: UNDELIVERED from any part goes out at once under the first part's
 * id, DELIVERED only once every part has reported it, SENT as it comes.
 */
export class ReceiptRouter {
  private readonly byPart = new Map<string, PartGroup>();
  /** A multipart message about to be submitted. */
  newGroup(total: number): PartGroup {
    return { total, messageId: null, ids: [], delivered: new Set() };
  }

  /** One part was accepted under `smscId`. */
  addPart(group: PartGroup, smscId: string): void {
    group.messageId ??= smscId;
    group.ids.push(smscId);
    this.byPart.set(smscId, group);
    while (this.byPart.size > MAX_PARTS_REMEMBERED) {
      const oldest = this.byPart.keys().next().value;
      if (oldest === undefined) break;
      this.byPart.delete(oldest);
    }
  }

  /** True when a receipt for this id can be routed now (it is a part we know, or not one of ours to group). */
  knows(smscId: string): boolean {
    return this.byPart.has(smscId);
  }

  /** The receipt to hand on, or null when it only counts towards a multipart message that is not yet complete. */
  route(receipt: SmscReceipt): DeliveryReceipt | null {
    const { smscId, status, detail, at } = receipt;
    const group = this.byPart.get(smscId);
    if (!group?.messageId) return { messageId: smscId, status, detail, at };
    const messageId = group.messageId;
    if (status === 'DELIVERED') {
      group.delivered.add(smscId);
      if (group.delivered.size < group.total) return null;
    }
    if (status !== 'SENT') this.forget(group);
    return { messageId, status, detail, at };
  }

  private forget(group: PartGroup): void {
    for (const id of group.ids) this.byPart.delete(id);
  }
}
