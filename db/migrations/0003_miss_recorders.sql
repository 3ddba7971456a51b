-- 0003: misses per recorder. A process's dispatch handles count their misses in a file under
-- an id of their own (the recorder: a random id of the process and the file's identity), and
-- a merge keeps, per recorder and shape key, the larger of the two counts instead of adding
-- them: merging a file twice, or a file that already holds another file's counts, counts each
-- recorder's calls once. A recorder's counts only grow, so the larger is the later. Readers
-- sum over the recorders (TuningStore::misses, misses_summary).
-- Rows from before this version get a recorder made of the row itself, so that two upgraded
-- copies of one file still merge to one count. (A file that had already added another's
-- counts by an earlier merge cannot be told apart: those stay added.)

DROP VIEW misses_summary;
ALTER TABLE misses RENAME TO misses_before_recorders;

CREATE TABLE misses (
    device_id  TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    m          INTEGER NOT NULL CHECK (m > 0),
    n          INTEGER NOT NULL CHECK (n > 0),
    k          INTEGER NOT NULL CHECK (k > 0),
    trans_a    INTEGER NOT NULL CHECK (trans_a IN (0, 1)),
    trans_b    INTEGER NOT NULL CHECK (trans_b IN (0, 1)),
    precision  TEXT NOT NULL CHECK (precision IN ('fp32', 'tf32')),
    alignment  INTEGER NOT NULL CHECK (alignment IN (4, 8, 16)),
    recorder   TEXT NOT NULL CHECK (length(recorder) > 0),
    count      INTEGER NOT NULL CHECK (count > 0),
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL,
    PRIMARY KEY (device_id, m, n, k, trans_a, trans_b, precision, alignment, recorder)
);

INSERT INTO misses
SELECT device_id, m, n, k, trans_a, trans_b, precision, alignment,
       'before-recorders:' || count || '/' || first_seen || '/' || last_seen, count, first_seen, last_seen
FROM misses_before_recorders;
DROP TABLE misses_before_recorders;

CREATE VIEW misses_summary AS
SELECT substr(s.device_id, 1, 8) AS device,
       d.gpu_name AS gpu,
       s.m AS M, s.n AS N, s.k AS K,
       iif(s.trans_a, 'T', 'N') || iif(s.trans_b, 'T', 'N') AS trans,
       s.precision,
       s.alignment AS align,
       sum(s.count) AS count,
       count(*) AS recorders,
       min(s.first_seen) AS first_seen,
       max(s.last_seen) AS last_seen
FROM misses s
JOIN devices d ON d.id = s.device_id
GROUP BY s.device_id, s.m, s.n, s.k, s.trans_a, s.trans_b, s.precision, s.alignment
ORDER BY count DESC, s.m, s.n, s.k;
