from setuptools import setup

setup(name="tinyfmt", version="1.4", packages=["tinyfmt"])
