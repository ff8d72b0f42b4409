"""The package registries: the index client (pages, release dates, sdists), one room for every
layer that asks the index something."""
