-- What a build filled its rollup with (ROLLUP_HOLDS in rollup-builds.ts): a build from before
-- the rollups gained a column their facts imply (live_change) is not complete, so the rollup
-- is filled again from facts and queries read facts until it is.
ALTER TABLE rollup_builds
    ADD COLUMN IF NOT EXISTS holds UInt32 DEFAULT 0
