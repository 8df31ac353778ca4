import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/locales/de.json': 'a92acde6b0a2f3e26f5f41f72990207c9e0d886759f1188372402900c681fc8b', '/app/locales/en.json': '77e4dbfcd7381169edbfd5627d97baa6595b1fcdb26201f94ed4711d803a849e', '/app/locales/es.json': 'faa3e167820c03a52e33551d3f3de1a5646d666ec36f9890668ea5298edab935', '/app/locales/fr.json': 'b96a7fa278e2c65eef5474b652afa2e080ea02fdf163e5e4faa7c6281daef725'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import csv

EN = {'app.title': 'Ledger', 'nav.home': 'Home', 'nav.reports': 'Reports', 'nav.settings': 'Settings', 'greeting': 'Hello, {name}!', 'items.count': '{count} items in {folder}', 'error.network': 'Network error', 'error.quota': 'You used {used} of {limit}', 'button.save': 'Save', 'button.cancel': 'Cancel', 'export.done': 'Exported {count} rows to {file}', 'footer.legal': 'All rights reserved'}
SYNCED = {'de': ({'app.title': 'Ledger', 'nav.home': 'Start', 'nav.reports': 'Berichte', 'greeting': 'Hallo, {name}!', 'error.network': 'Netzwerkfehler', 'button.save': 'Speichern', 'button.cancel': 'Abbrechen', 'export.done': '{count} Zeilen nach {file} exportiert'}, [['error.quota', 'missing'], ['footer.legal', 'empty'], ['items.count', 'placeholders'], ['nav.help', 'obsolete'], ['nav.settings', 'missing']]), 'fr': ({'app.title': 'Ledger', 'nav.home': 'Accueil', 'nav.reports': 'Rapports', 'nav.settings': 'Réglages', 'items.count': '{count} éléments dans {folder}', 'error.quota': 'Vous avez utilisé {used} sur {limit}', 'button.save': 'Enregistrer', 'export.done': '{count} lignes exportées vers {file}'}, [['button.cancel', 'missing'], ['error.network', 'missing'], ['footer.legal', 'missing'], ['greeting', 'placeholders'], ['legacy.tip', 'obsolete'], ['old.banner', 'obsolete']]), 'es': ({'app.title': 'Ledger', 'nav.home': 'Inicio', 'nav.reports': 'Informes', 'nav.settings': 'Ajustes', 'greeting': '¡Hola, {name}!', 'items.count': '{count} elementos en {folder}', 'error.network': 'Error de red', 'error.quota': 'Usaste {used} de {limit}', 'button.save': 'Guardar', 'button.cancel': 'Cancelar', 'export.done': 'Exportadas {count} filas a {file}', 'footer.legal': 'Todos los derechos reservados'}, [])}


def test_catalogues_keep_only_good_translations():
    for lang, (values, _) in SYNCED.items():
        got = json.loads(Path(f"/app/locales/{lang}.json").read_text(encoding="utf-8"))
        assert got == values, lang


def test_catalogues_follow_source_key_order():
    for lang in SYNCED:
        got = list(json.loads(Path(f"/app/locales/{lang}.json").read_text(encoding="utf-8")))
        assert got == [key for key in EN if key in got] and got, lang


def test_report_rows():
    with open("/app/translation_report.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["locale", "key", "problem"]
    want = sorted([lang, key, problem] for lang, (_, report) in SYNCED.items() for key, problem in report)
    assert rows[1:] == want


def test_report_finds_placeholder_mismatches():
    with open("/app/translation_report.csv", newline="") as handle:
        rows = [r for r in csv.reader(handle) if r and r[-1] == "placeholders"]
    assert sorted(rows) == sorted([lang, key, "placeholders"] for lang, (_, report) in SYNCED.items()
                                  for key, problem in report if problem == "placeholders")


def test_source_catalogue_unchanged():
    assert unchanged("/app/locales/en.json")
