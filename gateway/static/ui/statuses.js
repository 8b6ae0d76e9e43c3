// The job statuses as the API spells them.  Generated from jobs/contract.py by scripts/generate_statuses.py: do not edit.
export const STATUS = Object.freeze({ held: "held", queued: "queued", processing: "processing", completed: "completed", failed: "failed", cancelled: "cancelled" });
export const STATUSES = Object.freeze(["held", "queued", "processing", "completed", "failed", "cancelled"]);
export const TERMINAL = new Set(["completed", "failed", "cancelled"]);
export const ACTIVE = Object.freeze(["held", "queued", "processing"]);
