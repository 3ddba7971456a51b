-- 0005: every timed measurement keeps how close its output came to the check's bounds
-- (tuner/accuracy.h), so that a user sees a kernel's margin and not only that it passed:
-- the largest scaled error |out - ref| / bound over the output, and the root mean square of
-- them, both in units of u = 2^-24 (fp32's unit roundoff), each the larger of the check's two
-- runs. NULL for a candidate refused before it was timed, for cuBLAS where its own output is
-- the reference (no --check-fp64), and for measurements stored before this version.

ALTER TABLE measurements ADD COLUMN max_error_u REAL;
ALTER TABLE measurements ADD COLUMN rms_error_u REAL;

DROP VIEW measurements_summary;
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
       round(x.max_error_u, 2) AS max_error_u,
       round(x.rms_error_u, 3) AS rms_error_u,
       iif(x.valid, 'valid', 'INVALID: ' || x.invalid_reason) AS verdict,
       x.measured_at
FROM measurements x
JOIN kernels kn ON kn.id = x.kernel_id
ORDER BY x.device_id, x.m, x.n, x.k, trans, x.precision, x.alignment, x.valid DESC, x.median_ms;
