--
-- key_rule: the key must match ^[A-Za-z0-9_.-]{1,80}$, checked first
--
SELECT okno_test.err(format('SELECT okno_create_booking(1, %L, %L)', k,
         okno_test.payload(3, '2027-01-01T10:00:00Z', '2027-01-01T11:00:00Z'))) AS result, k AS key
  FROM (VALUES (''), ('a b'), (' a'), ('a '), ('a/b'), ('a:b'), ('a+b'), ('a,b'),
               (E'a\tb'), (E'a\nb'), ('ключ'), ('é'), ('a''b'), ('a"b'), ('*'), ('%'),
               (repeat('x', 81))) AS t(k);

-- NULL is invalid_key, never a NULL result
SELECT okno_test.err($$SELECT okno_create_booking(1, NULL, '{}')$$);
SELECT okno_create_booking(1, NULL, NULL);

-- every allowed character, and exactly 80 characters, are fine
SELECT okno_create_booking(1, 'AZaz09_.-', okno_test.payload(3, '2027-01-01T10:00:00Z', '2027-01-01T11:00:00Z')) ->> 'id' IS NOT NULL AS created;
SELECT okno_create_booking(1, repeat('k', 80), okno_test.payload(3, '2027-01-01T11:00:00Z', '2027-01-01T12:00:00Z')) ->> 'id' IS NOT NULL AS created;
SELECT request_key, length(request_key) FROM idempotency WHERE request_key LIKE 'AZ%' OR request_key LIKE 'kkk%' ORDER BY 1;

-- keys are case-sensitive: another case is another key, so this is a new
-- request for the slot "AZaz09_.-" holds
SELECT okno_test.err(format('SELECT okno_create_booking(1, %L, %L)', 'azAZ09_.-',
         okno_test.payload(3, '2027-01-01T10:00:00Z', '2027-01-01T11:00:00Z')));

-- the key rule runs before everything else: bad payload, null actor
SELECT okno_test.err($$SELECT okno_create_booking(NULL, 'bad key', '[]')$$);
SELECT okno_test.err($$SELECT okno_create_booking(999, '', NULL)$$);
