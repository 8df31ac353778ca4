#!/bin/bash
set -e
cd /app/shapes
cat > Makefile <<'EOF'
PREFIX ?= /usr/local
CC = gcc
CFLAGS = -O2 -Wall -fPIC -Ilib
LIBOBJS = lib/area.o lib/perimeter.o
SONAME = libgeom.so.1
REAL = libgeom.so.1.2.0

all: $(REAL) shapes

$(REAL): $(LIBOBJS)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $@ $(LIBOBJS) -lm
	ln -sf $(REAL) $(SONAME)
	ln -sf $(SONAME) libgeom.so

# RUNPATH relative to the program itself: the installed tree can move.
shapes: app/shapes.o $(REAL)
	$(CC) -o $@ app/shapes.o -L. -lgeom -Wl,-rpath,'$$ORIGIN/../lib'

%.o: %.c lib/geom.h
	$(CC) $(CFLAGS) -c -o $@ $<

install: all
	mkdir -p $(PREFIX)/bin $(PREFIX)/lib
	cp shapes $(PREFIX)/bin/
	cp $(REAL) $(PREFIX)/lib/
	ln -sf $(REAL) $(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(PREFIX)/lib/libgeom.so

clean:
	rm -f lib/*.o app/*.o libgeom.so* shapes

.PHONY: all install clean
EOF
make clean
make
make install PREFIX=/app/dist
env -u LD_LIBRARY_PATH /app/dist/bin/shapes circle 2
