SELECT * FROM okno_drain(100);
