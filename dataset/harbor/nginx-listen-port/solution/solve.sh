#!/bin/bash
sed -i -E 's/(listen[[:space:]]+)80\b/\18081/' /app/nginx.conf
