import { monotonicFactory } from 'ulid';

/**
 * Ids of webhooks (`wh_…`) and deliveries (`msg_…`): ULIDs, so they are not enumerable, sort by
 * creation time (delivery pages use them as cursors) and contain no `.` (Standard Webhooks forbids
 * one in `webhook-id`). Monotonic within a process: deliveries created together keep their order.
 */
const nextUlid = monotonicFactory();

export const newWebhookId = (): string => `wh_${nextUlid()}`;
export const newDeliveryId = (): string => `msg_${nextUlid()}`;

export const WEBHOOK_ID = /^wh_[0-9A-HJKMNP-TV-Z]{26}$/;
export const DELIVERY_ID = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;
