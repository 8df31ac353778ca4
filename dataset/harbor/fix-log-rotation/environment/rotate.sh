#!/bin/bash
# Keep the newest KEEP (default 2) files of DIR matching *.log; delete the older ones.
DIR=$1
KEEP=${2:-2}
cd $DIR
ls -t *.log | tail -n +$KEEP | xargs rm -f
