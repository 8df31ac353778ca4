#!/bin/bash
cd /app
cp /solution/fixed/ledgerkit/money.py /solution/fixed/ledgerkit/rates.py ledgerkit/
cp /solution/fixed/ledgerkit/importers/base.py /solution/fixed/ledgerkit/importers/bank_csv.py \
   /solution/fixed/ledgerkit/importers/qif.py ledgerkit/importers/
python3 -m unittest discover -s unit_tests -t .
