from setuptools import find_packages, setup

setup(
    name="geo-cli",
    version="0.4.0",
    description="geodist: the distance between two points",
    packages=find_packages(),
    install_requires=["geo-core>=1.0"],
    entry_points={"console_scripts": ["geodist=geo_cli.main:run"]},
)
