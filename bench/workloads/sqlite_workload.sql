-- Workload (c'): Debian's sqlite3 doing ordinary work on an in-memory database —
-- generated rows, text columns, an index, joins, grouping, sorting. Deterministic
-- (no random(), no time), so the printed checksum is fixed.
-- usage: sqlite3 :memory: < sqlite_workload.sql
-- Smaller run: sqlite3 -cmd "CREATE TABLE params(rows INTEGER); INSERT INTO params VALUES (5000)" ...
CREATE TABLE IF NOT EXISTS params(rows INTEGER);
INSERT INTO params SELECT 120000 WHERE NOT EXISTS (SELECT 1 FROM params);

CREATE TABLE item(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, price REAL, note TEXT);
WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < (SELECT rows FROM params))
INSERT INTO item
SELECT i, (i * 7919) % 997, printf('item-%08d-%s', i, hex(i * 2654435761 % 4294967296)),
       ((i * 31337) % 100000) / 100.0, substr(printf('%.*c', 20 + i % 80, 'x'), 1)
FROM seq;

CREATE INDEX item_grp ON item(grp, price);

CREATE TABLE grp_total AS
SELECT grp, count(*) AS n, sum(price) AS total, max(length(note)) AS longest,
       group_concat(substr(name, 6, 8), ',') AS names
FROM item GROUP BY grp;

CREATE TABLE pairs AS
SELECT a.id AS a_id, b.grp AS b_grp, a.price + b.total AS score
FROM item AS a JOIN grp_total AS b ON b.grp = (a.grp + 1) % 997
WHERE a.id % 3 = 0;

UPDATE item SET note = upper(note) || '-' || grp WHERE id % 5 = 0;
DELETE FROM item WHERE id % 11 = 0;

SELECT 'sqlite_workload rows=' || (SELECT rows FROM params)
       || ' checksum=' || printf('%d', (SELECT sum(length(note) * (id % 13)) FROM item)
                                       + (SELECT count(*) FROM pairs)
                                       + (SELECT sum(length(names)) FROM grp_total)
                                       + (SELECT cast(sum(score) AS INTEGER) FROM
                                            (SELECT score FROM pairs ORDER BY score DESC, a_id LIMIT 1000)));
