-- Independent test vectors for okno_canonical() and okno_fingerprint().
--
-- GENERATED FILE -- DO NOT EDIT BY HAND.
-- The vectors below come from test/vectors/make_vectors.py, which computes
-- the canonical text with Python's json module (plus its own RFC 3339 /
-- calendar arithmetic) and the fingerprint with hashlib.sha256, independently
-- of the C code.  Edit the payload list there and re-run
--     python3 test/vectors/make_vectors.py
-- to regenerate this file and test/vectors/vectors.tsv.
--
-- Assumes the okno extension has already been created by an earlier test.

CREATE TEMP TABLE okno_vectors(n int, payload text, canonical text, fingerprint text);
INSERT INTO okno_vectors VALUES
(1, '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(2, '{"resource_id":1,"starts_at":"2026-12-01T01:30:00-05:30","ends_at":"2026-12-01T02:30:00-05:30"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(3, '{"resource_id":1,"starts_at":"2026-12-01T07:00:00Z","ends_at":"2026-12-01T08:00:00Z"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(4, '{"resource_id":1,"starts_at":"2026-12-01T07:00:00z","ends_at":"2026-12-01T08:00:00z"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(5, '{"resource_id":1,"starts_at":"2026-12-01T07:00:00-00:00","ends_at":"2026-12-01T08:00:00-00:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(6, '{"resource_id":1,"starts_at":"2026-12-01T07:00:00+00:00","ends_at":"2026-12-01T08:00:00+00:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(7, '{"resource_id":1,"starts_at":"2026-12-02T06:59:00+23:59","ends_at":"2026-12-02T07:59:00+23:59"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(8, '{"resource_id":1,"starts_at":"2026-11-30T07:01:00-23:59","ends_at":"2026-11-30T08:01:00-23:59"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(9, '{"resource_id":1,"starts_at":"2026-12-01t07:00:00Z","ends_at":"2026-12-01t08:00:00z"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(10, '{"resource_id":1,"starts_at":"2026-12-01t10:00:00+03:00","ends_at":"2026-12-01T02:30:00-05:30"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(11, '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T08:30:00Z"}', '{"ends_at":"2026-12-01T08:30:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', '8771e7b9814608d2a2b9396257a4d03708101d7068b9fbfe5b276adc6633a0dd'),
(12, '{"resource_id":1,"ends_at":"2026-12-01T11:00:00+03:00","starts_at":"2026-12-01T10:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(13, '{"starts_at":"2026-12-01T10:00:00+03:00","resource_id":1,"ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(14, '{"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00","resource_id":1}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(15, '{"ends_at":"2026-12-01T11:00:00+03:00","resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(16, '{"ends_at":"2026-12-01T11:00:00+03:00","starts_at":"2026-12-01T10:00:00+03:00","resource_id":1}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(17, '  { "resource_id" : 1 , "starts_at" : "2026-12-01T10:00:00+03:00" , "ends_at" : "2026-12-01T11:00:00+03:00" }  ', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(18, '{   "resource_id": 1,   "starts_at": "2026-12-01T10:00:00+03:00",   "ends_at": "2026-12-01T11:00:00+03:00" } ', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(19, '{ "ends_at" : "2026-12-01T08:00:00Z",  "starts_at":"2026-12-01T07:00:00Z",  "resource_id": 1 }', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(20, '{"resource_id":1.0,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(21, '{"resource_id":1e0,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(22, '{"resource_id":10E-1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(23, '{"resource_id":0.1e+1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(24, '{"resource_id":1.000000,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(25, '{"resource_id":2147483647,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":2147483647,"starts_at":"2026-12-01T07:00:00Z"}', '19c5ea0a141007e226f814bea0ad6038266b8394ffb9d16777989ebf46ce91db'),
(26, '{"resource_id":2.147483647e9,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":2147483647,"starts_at":"2026-12-01T07:00:00Z"}', '19c5ea0a141007e226f814bea0ad6038266b8394ffb9d16777989ebf46ce91db'),
(27, '{"resource_id":2147483647.0,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":2147483647,"starts_at":"2026-12-01T07:00:00Z"}', '19c5ea0a141007e226f814bea0ad6038266b8394ffb9d16777989ebf46ce91db'),
(28, '{"resource_id":214748364700E-2,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":2147483647,"starts_at":"2026-12-01T07:00:00Z"}', '19c5ea0a141007e226f814bea0ad6038266b8394ffb9d16777989ebf46ce91db'),
(29, '{"resource_id":42,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":42,"starts_at":"2026-12-01T07:00:00Z"}', '3f2a566774b579ab0db7f7c9c0980a50944d83c17997be47ac1c0b12e3723a6d'),
(30, '{"resource_id":1E2,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":100,"starts_at":"2026-12-01T07:00:00Z"}', '6975c6225b8865f6b860c5762928fcad0c8fe2e95a925614657dd80b3b0a5fa7'),
(31, '{"resource_id":7,"starts_at":"2026-12-01T07:00:00.5Z","ends_at":"2026-12-01T08:00:00.25Z"}', '{"ends_at":"2026-12-01T08:00:00.250000Z","resource_id":7,"starts_at":"2026-12-01T07:00:00.500000Z"}', '49e1891567ef5a1c201d2c0075b251e2e9b0556396ca97f0fd7155d4db21bb01'),
(32, '{"resource_id":7,"starts_at":"2026-12-01T07:00:00.000001Z","ends_at":"2026-12-01T07:00:00.000002Z"}', '{"ends_at":"2026-12-01T07:00:00.000002Z","resource_id":7,"starts_at":"2026-12-01T07:00:00.000001Z"}', '2f7e3eb5db733f1a1e88684c7dd3315a346a46bd5125e263ae4668b61a9130a5'),
(33, '{"resource_id":7,"starts_at":"2026-12-01T07:00:00.120000Z","ends_at":"2026-12-01T07:00:00.123Z"}', '{"ends_at":"2026-12-01T07:00:00.123000Z","resource_id":7,"starts_at":"2026-12-01T07:00:00.120000Z"}', '90a02430661194efbfc52cc9ec0e58b8df4f3e0f70d5b996f932e3652c09d1fe'),
(34, '{"resource_id":7,"starts_at":"2026-12-01T07:00:00.000000Z","ends_at":"2026-12-01T08:00:00.0Z"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":7,"starts_at":"2026-12-01T07:00:00Z"}', 'eb75fe2da776cd8bbf8e354c7af69d89d249b6a88d601f53f68cb893c444c395'),
(35, '{"resource_id":7,"starts_at":"2026-12-01T07:00:00.1234Z","ends_at":"2026-12-01T07:00:00.12345Z"}', '{"ends_at":"2026-12-01T07:00:00.123450Z","resource_id":7,"starts_at":"2026-12-01T07:00:00.123400Z"}', '1a34e9b53d3e4cfee0f3a9e625b42da6c803e1f782fd49e5c9124bdd9c82a8b0'),
(36, '{"resource_id":7,"starts_at":"2026-12-01T10:00:00.123456+03:00","ends_at":"2026-12-01T02:30:00.654321-05:30"}', '{"ends_at":"2026-12-01T08:00:00.654321Z","resource_id":7,"starts_at":"2026-12-01T07:00:00.123456Z"}', '6f7067998ba6231a7e2f5f7059be0c57e027a7df0e2831cc9772329f1f29e368'),
(37, '{"resource_id":7,"starts_at":"2026-12-01T07:00:00.9Z","ends_at":"2026-12-01T07:00:00.91Z"}', '{"ends_at":"2026-12-01T07:00:00.910000Z","resource_id":7,"starts_at":"2026-12-01T07:00:00.900000Z"}', '57b00a1f98ad16c5c03d7d7299170ec919b1b48c722b1f7d4db59af5222ae3f9'),
(38, '{"resource_id":7,"starts_at":"2026-12-01T23:59:59.999999+01:00","ends_at":"2026-12-01T23:59:59.999999-01:00"}', '{"ends_at":"2026-12-02T00:59:59.999999Z","resource_id":7,"starts_at":"2026-12-01T22:59:59.999999Z"}', '69110e3430204f9fc608d59b0fe1ac44dd769ef52afd45c748a4952bbe5c3320'),
(39, '{"resource_id":7,"starts_at":"2026-12-01T07:00:00.100Z","ends_at":"2026-12-01T07:00:00.110Z"}', '{"ends_at":"2026-12-01T07:00:00.110000Z","resource_id":7,"starts_at":"2026-12-01T07:00:00.100000Z"}', '7ae6d8cba7e55d550aaed4edff1c8094337590638d75f9c9ad1c75b5194cc16a'),
(40, '{"resource_id":3,"starts_at":"2026-03-15T01:00:00+03:00","ends_at":"2026-03-15T04:00:00+03:00"}', '{"ends_at":"2026-03-15T01:00:00Z","resource_id":3,"starts_at":"2026-03-14T22:00:00Z"}', '64205f5055fe7872478dce5f23a3875309923703e64b5c27450edba42139e9f3'),
(41, '{"resource_id":3,"starts_at":"2026-03-14T22:00:00-05:00","ends_at":"2026-03-14T23:30:00-05:00"}', '{"ends_at":"2026-03-15T04:30:00Z","resource_id":3,"starts_at":"2026-03-15T03:00:00Z"}', '797e12d0e72c5066f7c2a6c494ad60bf074f77776460ca25e547ec4de400aa52'),
(42, '{"resource_id":3,"starts_at":"2026-05-01T00:30:00+01:00","ends_at":"2026-05-01T01:30:00+01:00"}', '{"ends_at":"2026-05-01T00:30:00Z","resource_id":3,"starts_at":"2026-04-30T23:30:00Z"}', '155e3397ec850cf7b8809e44c16dd3bc9514c9ac3acfb60b19ee21004f05a413'),
(43, '{"resource_id":3,"starts_at":"2026-04-30T23:00:00-02:00","ends_at":"2026-05-01T00:00:00-02:00"}', '{"ends_at":"2026-05-01T02:00:00Z","resource_id":3,"starts_at":"2026-05-01T01:00:00Z"}', '9ff17116ca79a691d935ab54583aecd2b49a81de95ba352eba6eaac398385ed5'),
(44, '{"resource_id":3,"starts_at":"2026-01-01T01:00:00+03:00","ends_at":"2026-01-01T04:00:00+03:00"}', '{"ends_at":"2026-01-01T01:00:00Z","resource_id":3,"starts_at":"2025-12-31T22:00:00Z"}', '90c4da6a1af76f70d5f15d69f27e6b86f6a293a7a30fd5f09d5684e3e9951a1a'),
(45, '{"resource_id":3,"starts_at":"2025-12-31T20:00:00-05:00","ends_at":"2025-12-31T21:00:00-05:00"}', '{"ends_at":"2026-01-01T02:00:00Z","resource_id":3,"starts_at":"2026-01-01T01:00:00Z"}', 'e1ba06503a0b93508673de2053e985fbf0d98e01fc8a6b9ad0c893bdb2017886'),
(46, '{"resource_id":3,"starts_at":"2026-01-01T00:00:00+23:59","ends_at":"2025-12-31T00:00:00-23:59"}', '{"ends_at":"2025-12-31T23:59:00Z","resource_id":3,"starts_at":"2025-12-31T00:01:00Z"}', '062a92e02118cc3f647866c4e9d956bae7bdb0f9cf93f544bf5271eb1fee5c2b'),
(47, '{"resource_id":5,"starts_at":"2024-02-29T12:00:00Z","ends_at":"2024-02-29T13:00:00Z"}', '{"ends_at":"2024-02-29T13:00:00Z","resource_id":5,"starts_at":"2024-02-29T12:00:00Z"}', '32346b7fa85138fbbdf9a792383b9d4da082cd82322e1bf93428a4c9b1a5ab8d'),
(48, '{"resource_id":5,"starts_at":"2024-03-01T02:00:00+03:00","ends_at":"2024-03-01T03:00:00+03:00"}', '{"ends_at":"2024-03-01T00:00:00Z","resource_id":5,"starts_at":"2024-02-29T23:00:00Z"}', 'dfd504998d1f6d1fd3e56117043837972725374297ecbcfa800947864c3ef277'),
(49, '{"resource_id":5,"starts_at":"2024-02-28T23:00:00-02:00","ends_at":"2024-02-29T23:00:00-02:00"}', '{"ends_at":"2024-03-01T01:00:00Z","resource_id":5,"starts_at":"2024-02-29T01:00:00Z"}', 'b2cd44a7f370d97d3303717491725cf8c85bbbf403f921b61ff203a266792c76'),
(50, '{"resource_id":5,"starts_at":"2000-03-01T00:00:00+01:00","ends_at":"2000-03-01T00:00:00Z"}', '{"ends_at":"2000-03-01T00:00:00Z","resource_id":5,"starts_at":"2000-02-29T23:00:00Z"}', '0a60fc7cb0022021649809b00fd8c5d5c5010810f38e706d81c4e51aa3e04b15'),
(51, '{"resource_id":5,"starts_at":"2100-03-01T00:00:00+01:00","ends_at":"2100-03-01T00:00:00Z"}', '{"ends_at":"2100-03-01T00:00:00Z","resource_id":5,"starts_at":"2100-02-28T23:00:00Z"}', 'c4332a10de0aa7116ae0fa4c1317bd2cb2661b1668d62470457bee5757b7470c'),
(52, '{"resource_id":5,"starts_at":"2023-03-01T00:00:00+01:00","ends_at":"2023-03-01T00:00:00Z"}', '{"ends_at":"2023-03-01T00:00:00Z","resource_id":5,"starts_at":"2023-02-28T23:00:00Z"}', 'ac90a7df2e182e50a5afdd89655e09fb2fa8190b248e64c98014a128de9323ef'),
(53, '{"resource_id":9,"starts_at":"0001-01-01T00:00:00Z","ends_at":"0001-01-01T00:00:00.000001Z"}', '{"ends_at":"0001-01-01T00:00:00.000001Z","resource_id":9,"starts_at":"0001-01-01T00:00:00Z"}', 'ea37b30a5875c4a78963a44a19748b612352099c52204c2a2a92412a6bda244b'),
(54, '{"resource_id":9,"starts_at":"0000-12-31T23:00:00-01:00","ends_at":"0001-01-01T01:00:00Z"}', '{"ends_at":"0001-01-01T01:00:00Z","resource_id":9,"starts_at":"0001-01-01T00:00:00Z"}', '1e000382540b359d274481b5f1091808e0ae95590914bb6170fa6583dc080740'),
(55, '{"resource_id":9,"starts_at":"0000-12-31T00:01:00-23:59","ends_at":"0001-01-01T23:59:01+23:59"}', '{"ends_at":"0001-01-01T00:00:01Z","resource_id":9,"starts_at":"0001-01-01T00:00:00Z"}', '3b6acf30c91e2d17e148fd2b4a38245e8072db89f0e76c14bacbebc8557ef4e2'),
(56, '{"resource_id":9,"starts_at":"0004-02-29T00:00:00Z","ends_at":"0004-03-01T00:00:00+23:59"}', '{"ends_at":"0004-02-29T00:01:00Z","resource_id":9,"starts_at":"0004-02-29T00:00:00Z"}', '0ea950a2c9284b431ff8f0cac404ca413517b59c8bc4881c0094456e9bd17042'),
(57, '{"resource_id":9,"starts_at":"9999-12-31T23:59:59.999998Z","ends_at":"9999-12-31T23:59:59.999999Z"}', '{"ends_at":"9999-12-31T23:59:59.999999Z","resource_id":9,"starts_at":"9999-12-31T23:59:59.999998Z"}', 'cf0cd38e73c31c0700f0216e8ee28654210c8a4785c300f63c5e55d912dba90a'),
(58, '{"resource_id":9,"starts_at":"9999-12-31T00:00:00-23:58","ends_at":"9999-12-31T23:59:59.999999+00:00"}', '{"ends_at":"9999-12-31T23:59:59.999999Z","resource_id":9,"starts_at":"9999-12-31T23:58:00Z"}', 'f6477eb5e38b72214998e64d740400912a48575ea1983ebdbf865c68269f0d4a'),
(59, '{"resource_id":9,"starts_at":"0001-01-01T00:00:00Z","ends_at":"9999-12-31T23:59:59.999999Z"}', '{"ends_at":"9999-12-31T23:59:59.999999Z","resource_id":9,"starts_at":"0001-01-01T00:00:00Z"}', 'b244eb4de0f367578738a56841a00dc6df010b92010a804925da34f682eea656'),
(60, '{"resource_id":11,"starts_at":"1969-12-31T23:59:59.999999Z","ends_at":"1970-01-01T00:00:00Z"}', '{"ends_at":"1970-01-01T00:00:00Z","resource_id":11,"starts_at":"1969-12-31T23:59:59.999999Z"}', 'aca1352825c91eac384fd4aaca7d3e9e5bdd882c9d279bc828c28e0dfc4fbb0c'),
(61, '{"resource_id":11,"starts_at":"1970-01-01T00:00:00+00:01","ends_at":"1970-01-01T00:00:00.000001Z"}', '{"ends_at":"1970-01-01T00:00:00.000001Z","resource_id":11,"starts_at":"1969-12-31T23:59:00Z"}', '993450100f1b60541ba43a6c38c23d0045a6b34628c9fd52119f2d0a91e62aa9'),
(62, '{"resource_id":11,"starts_at":"1900-01-01T00:00:00+01:00","ends_at":"1900-01-01T00:00:00-01:00"}', '{"ends_at":"1900-01-01T01:00:00Z","resource_id":11,"starts_at":"1899-12-31T23:00:00Z"}', '73c9fc79d7f09b027ae34950dc5356da5910a8c9c5adcf84c59efad665254443'),
(63, '{"resource_id":11,"starts_at":"1582-10-10T12:00:00+05:45","ends_at":"1582-10-15T12:00:00-09:30"}', '{"ends_at":"1582-10-15T21:30:00Z","resource_id":11,"starts_at":"1582-10-10T06:15:00Z"}', '2781ec75a7832fc22a7b02503f274a0bb93b323e28138dff5f6a64a5f003e0bb'),
(64, '{"resource_id":11,"starts_at":"1066-10-14T09:00:00.5-00:00","ends_at":"1066-10-14T17:00:00.75+00:00"}', '{"ends_at":"1066-10-14T17:00:00.750000Z","resource_id":11,"starts_at":"1066-10-14T09:00:00.500000Z"}', '12847f51abecd3f4a2a9c2394f305997e8e51d5ba3b4d3e86d909161f9e3235d');

SELECT count(*) AS vectors FROM okno_vectors;

-- every vector's canonical text and fingerprint match; lists mismatches only
SELECT n, payload, okno_canonical(payload::jsonb) AS got_canonical, canonical AS want_canonical
  FROM okno_vectors
 WHERE okno_canonical(payload::jsonb) IS DISTINCT FROM canonical
 ORDER BY n;
SELECT n, okno_fingerprint(payload::jsonb) AS got, fingerprint AS want
  FROM okno_vectors
 WHERE okno_fingerprint(payload::jsonb) IS DISTINCT FROM fingerprint
 ORDER BY n;

-- fingerprint is sha256 of canonical (cross-check with PostgreSQL's own sha256)
SELECT n FROM okno_vectors
 WHERE encode(pg_catalog.sha256(convert_to(canonical, 'UTF8')), 'hex') <> fingerprint
 ORDER BY n;

-- invariance: the same canonical text under different session settings
SET TimeZone = 'Pacific/Chatham';
SET DateStyle = 'SQL, DMY';
SET IntervalStyle = 'sql_standard';
SELECT count(*) AS mismatches_under_other_settings
  FROM okno_vectors
 WHERE okno_canonical(payload::jsonb) <> canonical
    OR okno_fingerprint(payload::jsonb) <> fingerprint;
RESET TimeZone;
RESET DateStyle;
RESET IntervalStyle;

DROP TABLE okno_vectors;
