from setuptools import setup

setup(
    name="geo-core",
    version="1.0.0",
    description="Great-circle distances",
    packages=["geo_core"],
)
