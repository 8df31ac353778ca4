#!/bin/bash
printf '\n[cache]\nbackend = redis\nttl = 300\n' >> /app/app.ini
