# bench/plot.gp: docs/bench.png, okno beside its baselines, from bench.dat
# (written by bench/report.py from one run of tools/bench).
#   gnuplot -e "datafile='docs/bench.dat'; outfile='docs/bench.png'" bench/plot.gp
if (!exists("datafile")) datafile = 'docs/bench.dat'
if (!exists("outfile")) outfile = 'docs/bench.png'

set terminal pngcairo size 2000,1000 font "DejaVu Sans,10"
set output outfile
set datafile separator "\t"
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics lc rgb "#dddddd"
set key top left font ",9" samplen 1.5
set xtics nomirror rotate by -20 font ",9"
set ytics nomirror
okno = "#d62728"; plp = "#1f77b4"; floor = "#7f7f7f"; pgq = "#2ca02c"; c5 = "#9467bd"

set multiplot layout 2,4 title "okno beside its baselines (medians of one tools/bench run)" font ",13"

set title "1. CPU per call in one transaction (µs, log scale, lower is better)"
set logscale y
plot datafile index 0 using 2:xtic(1) title "okno" lc rgb okno, \
     '' index 0 using 3 title "plpgsql" lc rgb plp, \
     '' index 0 using 4 title "floor" lc rgb floor
unset logscale y

set title "2. create TPS (higher is better)"
set yrange [0:*]
plot datafile index 1 using 2:xtic(1) title "okno" lc rgb okno, \
     '' index 1 using 3 title "plpgsql" lc rgb plp, \
     '' index 1 using 4 title "floor" lc rgb floor, \
     '' index 1 using 5 title "pgq.insert\\_event" lc rgb pgq

set title "2. replay and key\\_reused TPS (sync on)"
plot datafile index 2 using 2:xtic(1) title "okno" lc rgb okno, \
     '' index 2 using 3 title "plpgsql" lc rgb plp

set title "2. drain events/s (log scale)"
set logscale y
set yrange [*:*]
plot datafile index 3 using 2:xtic(1) title "okno\\_drain\\_once" lc rgb "#ff9896", \
     '' index 3 using 3 title "okno\\_drain(100)" lc rgb "#e377c2", \
     '' index 3 using 4 title "okno\\_drain(1000)" lc rgb okno, \
     '' index 3 using 5 title "PgQ batch read" lc rgb pgq
unset logscale y

set title "3. drain µs per event vs delivered rows (log scale)"
set logscale y
plot datafile index 4 using 2:xtic(1) title "okno\\_drain\\_once" lc rgb "#ff9896", \
     '' index 4 using 3 title "okno\\_drain(1000)" lc rgb okno
unset logscale y

set title "3. sustained drain, no vacuum: events/s each second"
set key bottom right
set style data linespoints
set xlabel "s"
set logscale y
set xtics norotate
plot datafile index 5 using 1:2 title "okno\\_drain\\_once" lc rgb "#ff9896" pt 7 ps 0.5, \
     '' index 5 using 1:3 title "okno\\_drain(100)" lc rgb okno pt 7 ps 0.5
unset logscale y
unset xlabel

set key top left
set title "4. create CPU µs per call vs rows already stored"
set style data histograms
set xtics rotate by -20
set yrange [0:*]
plot datafile index 6 using 2:xtic(1) title "okno" lc rgb okno, \
     '' index 6 using 3 title "floor" lc rgb floor

set title "2. okno-relay: lines on stdout while pgbench books"
set style data lines
set xlabel "s"
set xtics norotate
plot datafile index 7 using 1:2 title "sync on" lc rgb okno lw 2, \
     '' index 7 using 1:3 title "sync off" lc rgb plp lw 2

unset multiplot
