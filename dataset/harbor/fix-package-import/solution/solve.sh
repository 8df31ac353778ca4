#!/bin/bash
sed -i 's/from app.format import/from app.formatting import/' /app/app/helpers.py
