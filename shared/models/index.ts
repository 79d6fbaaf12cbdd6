export * from './primitives.js';
export * from './userOp.js';
export * from './address.js';
export * from './entities.js';
export * from './log.js';
export * from './webhook.js';
export * from './network.js';
export * from './activity.js';
