#!/bin/bash
chmod 755 /app/bin/tool
