-- a subscriber's batch drain (scenario 6): -D sub=NAME
SELECT * FROM okno_drain(1000, :sub);
