-- 0001: the tables.
--
-- Every row that depends on the GPU or the toolchain names its device, and a device is its
-- full fingerprint (GPU, compute capability, SM count, memory, driver, CUDA runtime, NVRTC
-- and library versions), so rows from another GPU or toolchain are kept apart and never
-- used in its place. Shapes are stored as the shape key of db/shape_key.h, one column a
-- field. Times are ISO 8601 UTC text ('2026-11-29T15:43:01.123Z'), which sorts and reads.

CREATE TABLE devices (
    id              TEXT PRIMARY KEY,  -- the fingerprint's hash: 16 hex digits over every column below
    gpu_name        TEXT NOT NULL,
    cc_major        INTEGER NOT NULL,
    cc_minor        INTEGER NOT NULL,
    sm_count        INTEGER NOT NULL,
    memory_bytes    INTEGER NOT NULL,
    driver_version  INTEGER NOT NULL,  -- as cudaDriverGetVersion: 13000 is 13.0
    runtime_version INTEGER NOT NULL,  -- as cudaRuntimeGetVersion
    nvrtc_version   TEXT NOT NULL,     -- '13.0'
    library_version TEXT NOT NULL      -- this project's version
);

-- A point of a family's parameter space. cuBLAS itself is the kernel of family 'cublas'.
CREATE TABLE kernels (
    id            INTEGER PRIMARY KEY,
    family        TEXT NOT NULL,  -- 'async'
    params        TEXT NOT NULL,  -- values in the family's parameter order: '128,128,8,8,8'
    description   TEXT NOT NULL,  -- 'async BM=128 BN=128 BK=8 TM=8 TN=8'
    template_hash TEXT NOT NULL,  -- the template's source hash: an edited template is another kernel
    UNIQUE (family, params, template_hash)
);

-- The compiled-kernel cache, so that neither the tuner nor dispatch compiles a known kernel
-- twice. Not scoped by device: a cubin depends only on what its key hashes.
CREATE TABLE binaries (
    cache_key         TEXT PRIMARY KEY,  -- hash of rendered source, options, arch and NVRTC version
    kernel_id         INTEGER NOT NULL REFERENCES kernels (id),
    arch              INTEGER NOT NULL,  -- 90 for sm_90
    nvrtc_version     TEXT NOT NULL,
    lowered_name      TEXT NOT NULL,     -- the mangled symbol to look up in the cubin
    cubin             BLOB NOT NULL,
    registers         INTEGER NOT NULL,  -- ptxas figures, per thread / per block
    shared_bytes      INTEGER NOT NULL,
    stack_bytes       INTEGER NOT NULL,
    spill_store_bytes INTEGER NOT NULL,
    spill_load_bytes  INTEGER NOT NULL,
    compile_ms        REAL NOT NULL,
    created_at        TEXT NOT NULL,
    hits              INTEGER NOT NULL DEFAULT 0,  -- lookups this row answered instead of NVRTC
    last_hit_at       TEXT
);

-- Every candidate ever timed or rejected, valid or not.
CREATE TABLE measurements (
    id             INTEGER PRIMARY KEY,
    device_id      TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    m              INTEGER NOT NULL CHECK (m > 0),
    n              INTEGER NOT NULL CHECK (n > 0),
    k              INTEGER NOT NULL CHECK (k > 0),
    trans_a        INTEGER NOT NULL CHECK (trans_a IN (0, 1)),
    trans_b        INTEGER NOT NULL CHECK (trans_b IN (0, 1)),
    precision      TEXT NOT NULL CHECK (precision IN ('fp32', 'tf32')),
    alignment      INTEGER NOT NULL CHECK (alignment IN (4, 8, 16)),
    kernel_id      INTEGER NOT NULL REFERENCES kernels (id),
    median_ms      REAL,  -- the times are NULL for a candidate rejected before it was timed
    min_ms         REAL,
    max_ms         REAL,
    runs           INTEGER NOT NULL,
    tflops         REAL GENERATED ALWAYS AS (2.0 * m * n * k / (median_ms * 1e9)) VIRTUAL,
    error_norm     REAL,  -- relative error norm against the reference
    valid          INTEGER NOT NULL CHECK (valid IN (0, 1)),
    invalid_reason TEXT NOT NULL DEFAULT '' CHECK (valid = 1 OR invalid_reason <> ''),
    sm_clock_mhz   INTEGER,  -- NULL when the clock could not be read
    measured_at    TEXT NOT NULL,
    tuner_version  TEXT NOT NULL
);
CREATE INDEX measurements_by_shape ON measurements (device_id, m, n, k, trans_a, trans_b, precision, alignment);

-- The kernel dispatch launches for a device and shape key, and the evidence for it.
CREATE TABLE winners (
    device_id  TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    m          INTEGER NOT NULL CHECK (m > 0),
    n          INTEGER NOT NULL CHECK (n > 0),
    k          INTEGER NOT NULL CHECK (k > 0),
    trans_a    INTEGER NOT NULL CHECK (trans_a IN (0, 1)),
    trans_b    INTEGER NOT NULL CHECK (trans_b IN (0, 1)),
    precision  TEXT NOT NULL CHECK (precision IN ('fp32', 'tf32')),
    alignment  INTEGER NOT NULL CHECK (alignment IN (4, 8, 16)),
    kernel_id  INTEGER NOT NULL REFERENCES kernels (id),
    binary_key TEXT REFERENCES binaries (cache_key),  -- NULL when the winner is cuBLAS
    ms         REAL NOT NULL CHECK (ms > 0),
    cublas_ms  REAL NOT NULL CHECK (cublas_ms > 0),  -- cuBLAS in the same run
    speedup    REAL GENERATED ALWAYS AS (cublas_ms / ms) VIRTUAL,
    tflops     REAL GENERATED ALWAYS AS (2.0 * m * n * k / (ms * 1e9)) VIRTUAL,
    tolerance  REAL NOT NULL,  -- the validation tolerance the winner passed
    provenance TEXT NOT NULL,  -- who chose it: the tuner's run, or the file it was merged from
    tuned_at   TEXT NOT NULL,
    PRIMARY KEY (device_id, m, n, k, trans_a, trans_b, precision, alignment)
);

-- Shape keys dispatch met without an exact winner: the list sgemm-tune --from-misses tunes.
CREATE TABLE misses (
    device_id  TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    m          INTEGER NOT NULL CHECK (m > 0),
    n          INTEGER NOT NULL CHECK (n > 0),
    k          INTEGER NOT NULL CHECK (k > 0),
    trans_a    INTEGER NOT NULL CHECK (trans_a IN (0, 1)),
    trans_b    INTEGER NOT NULL CHECK (trans_b IN (0, 1)),
    precision  TEXT NOT NULL CHECK (precision IN ('fp32', 'tf32')),
    alignment  INTEGER NOT NULL CHECK (alignment IN (4, 8, 16)),
    count      INTEGER NOT NULL CHECK (count > 0),
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL,
    PRIMARY KEY (device_id, m, n, k, trans_a, trans_b, precision, alignment)
);
