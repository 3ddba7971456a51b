-- 0002: views for people at the plain sqlite3 shell, e.g.
--   sqlite3 -header -column tuning.db 'SELECT * FROM winners_summary'
-- Kept apart from the tables so a later migration can redefine them (DROP VIEW, CREATE
-- VIEW) without touching data.

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
       w.tuned_at
FROM winners w
JOIN devices d ON d.id = w.device_id
JOIN kernels kn ON kn.id = w.kernel_id
ORDER BY d.gpu_name, w.device_id, w.m, w.n, w.k, trans, w.precision, w.alignment;

CREATE VIEW measurements_summary AS
SELECT substr(x.device_id, 1, 8) AS device,
       x.m AS M, x.n AS N, x.k AS K,
       iif(x.trans_a, 'T', 'N') || iif(x.trans_b, 'T', 'N') AS trans,
       x.precision,
       x.alignment AS align,
       kn.description AS kernel,
       round(x.median_ms, 4) AS median_ms,
       round(x.tflops, 2) AS tflops,
       x.runs,
       iif(x.valid, 'valid', 'INVALID: ' || x.invalid_reason) AS verdict,
       x.measured_at
FROM measurements x
JOIN kernels kn ON kn.id = x.kernel_id
ORDER BY x.device_id, x.m, x.n, x.k, trans, x.precision, x.alignment, x.valid DESC, x.median_ms;

CREATE VIEW misses_summary AS
SELECT substr(s.device_id, 1, 8) AS device,
       d.gpu_name AS gpu,
       s.m AS M, s.n AS N, s.k AS K,
       iif(s.trans_a, 'T', 'N') || iif(s.trans_b, 'T', 'N') AS trans,
       s.precision,
       s.alignment AS align,
       s.count,
       s.first_seen,
       s.last_seen
FROM misses s
JOIN devices d ON d.id = s.device_id
ORDER BY s.count DESC, s.m, s.n, s.k;

CREATE VIEW binaries_summary AS
SELECT kn.description AS kernel,
       'sm_' || b.arch AS arch,
       b.nvrtc_version AS nvrtc,
       length(b.cubin) AS bytes,
       b.registers,
       b.shared_bytes AS smem,
       b.spill_store_bytes + b.spill_load_bytes AS spilled,
       round(b.compile_ms, 1) AS compile_ms,
       b.hits,
       b.created_at
FROM binaries b
JOIN kernels kn ON kn.id = b.kernel_id
ORDER BY b.hits DESC, kn.description;
