# relay/relay.mk: okno-relay, the delivery worker (a libpq client program)
#
# Included by the top Makefile after PGXS, so CC, CFLAGS (which already
# ends with PG_CFLAGS: PGXS appends it), LDFLAGS, bindir and INSTALL_PROGRAM
# are PGXS's.  PGXS's MODULE_big owns OBJS and PROGRAM, hence the explicit
# rules.  Only libpq's client header directory is used: none of the server
# headers (CPPFLAGS) are needed.
#
#   make                 builds relay/okno-relay with everything else
#   make install         installs it as $(bindir)/okno-relay
#   make clean           removes it

RELAY_PROGRAM = relay/okno-relay
RELAY_SRCS    = $(wildcard relay/*.c)
RELAY_HDRS    = $(wildcard relay/*.h)

all: $(RELAY_PROGRAM)

$(RELAY_PROGRAM): $(RELAY_SRCS) $(RELAY_HDRS) relay/relay.mk
	$(CC) $(CFLAGS) -I$(shell $(PG_CONFIG) --includedir) -o $@ $(RELAY_SRCS) \
		$(LDFLAGS) -L$(shell $(PG_CONFIG) --libdir) -lpq

install: install-relay
uninstall: uninstall-relay
clean: clean-relay

install-relay: $(RELAY_PROGRAM)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(RELAY_PROGRAM) '$(DESTDIR)$(bindir)/okno-relay'

uninstall-relay:
	rm -f '$(DESTDIR)$(bindir)/okno-relay'

clean-relay:
	rm -f $(RELAY_PROGRAM)

EXTRA_CLEAN += $(RELAY_PROGRAM)

.PHONY: install-relay uninstall-relay clean-relay
