from setuptools import find_packages, setup

setup(
    name="detectron2",
    version="0.6",
    packages=find_packages(exclude=("configs", "tests*")),
)
