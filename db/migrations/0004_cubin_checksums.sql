-- 0004: a checksum of every cubin, written with it (cubin_checksum in db/records.h). SQLite
-- checks its pages' structure, not what a blob holds: a cubin damaged on disk or in transit
-- whose ELF headers still read whole would reach the GPU and run damaged machine code.
-- Binaries stored before this version have none (NULL) and are checked by their ELF alone.

ALTER TABLE binaries ADD COLUMN cubin_checksum TEXT;
