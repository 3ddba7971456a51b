-- 0006: each winner says what narrowed the search that chose it: an sgemm-tune run with
-- --families leaving out default families, the random strategy's sample, a smaller --top-k,
-- a --max-candidates cap it reached or a --budget-s that ran out ("" for the default search).
-- A later run that searches in full tunes such a shape again, where it skips one whose winner
-- came from a full search. Winners stored before this version read as full.

ALTER TABLE winners ADD COLUMN narrowed_by TEXT NOT NULL DEFAULT '';
