-- One row per outbox fact. Each row carries the task's state after the change, so state at
-- any instant is the latest row per task before it (argMax), and flows are plain counts.
-- non_replicated_deduplication_window makes a retried batch with the same token a no-op.
CREATE TABLE IF NOT EXISTS facts
(
    fact_id         UInt64,
    kind            LowCardinality(String),
    business        LowCardinality(String),
    task_gid        String,
    occurred_at     DateTime64(3, 'UTC'),
    project         String,
    assignee        String,
    status          LowCardinality(String),
    previous_status LowCardinality(String),
    due_on          Nullable(Date),
    task_created_at DateTime64(3, 'UTC'),
    dependency_gid  String,
    projected_at    DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (business, kind, occurred_at, fact_id)
SETTINGS non_replicated_deduplication_window = 10000
