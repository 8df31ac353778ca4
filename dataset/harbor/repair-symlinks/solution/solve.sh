#!/bin/bash
cd /app/links
for link in *; do
  [ -L "$link" ] || continue
  [ -e "$link" ] && continue
  target=$(readlink -- "$link")
  case "$target" in
    /*) ;;
    *) target=$(realpath -m -- "/app/links/$target") ;;
  esac
  case "$target" in
    /app/old_store/*) ln -sfn -- "/app/store/${target#/app/old_store/}" "$link" ;;
  esac
done
