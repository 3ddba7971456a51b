-- 0006: each winner says what narrowed the search that chose it: an sgemm-tune run with
-- --families leaving out default families, the random strategy's sample, a smaller --top-k,
-- a --max-candidates cap it reached or a --budget-s that ran out ("" for the default search).
-- A later run that searches in full tunes such a shape again, where it skips one whose winner
-- came from a full search. Winners stored before this version read as full.

ALTER TABLE winners ADD COLUMN narrowed_by TEXT NOT NULL DEFAULT '';

-- The summary shows it last, for the plain sqlite3 shell.
DROP VIEW winners_summary;
CREATE VIEW winners_summary AS
SELECT substr(w.device_id, 1, 8) AS device,
       d.gpu_name AS gpu,
       w.m AS M, w.n AS N, w.k AS K,
       iif(w.trans_a, 'T', 'N') || iif(w.trans_b, 'T', 'N') AS trans,
       w.precision,
       w.alignment AS align,
       kn.description AS kernel,
       round(w.ms, 4) AS ms,
       round(w.tflops, 2) AS tflops,
       round(w.cublas_ms, 4) AS cublas_ms,
       round(w.speedup, 2) AS speedup,
       w.tuned_at,
       w.narrowed_by
FROM winners w
JOIN devices d ON d.id = w.device_id
JOIN kernels kn ON kn.id = w.kernel_id
ORDER BY d.gpu_name, w.device_id, w.m, w.n, w.k, trans, w.precision, w.alignment;
