SELECT * FROM okno_drain_once();
