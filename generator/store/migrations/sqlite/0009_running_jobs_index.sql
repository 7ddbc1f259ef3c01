-- Every claim first looks for running jobs whose lease ran out, of any
-- kind: without this index that is a scan of every job ever queued.
CREATE INDEX jobs_running ON jobs(state, lease_until);
