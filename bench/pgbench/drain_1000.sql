SELECT * FROM okno_drain(1000);
