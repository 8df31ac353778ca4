#!/bin/bash
awk -F, -v OFS=, '{print $4, $1, $2}' /app/contacts.csv > /app/contacts_out.csv
