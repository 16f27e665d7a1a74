-- See 0042: the table the dropped view fed.
DROP TABLE IF EXISTS rollup_business_15m
