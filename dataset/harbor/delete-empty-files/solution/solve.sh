#!/bin/bash
find /app/data -type f -empty -delete
