#!/bin/bash
# Copy every file of /app/docs into /app/backup, adding the suffix .bak
SRC=/app/docs
DST=/app/backup
mkdir -p $DST
for f in $(ls $SRC); do
  cp $SRC/$f $DST/$f.bak
done
