-- PostgreSQL only (cluster mode): the lease index is narrowed so that lease
-- renewals are heap-only updates. SQLite has no lease index; this migration
-- keeps both lists of migrations alike.
SELECT 1;
