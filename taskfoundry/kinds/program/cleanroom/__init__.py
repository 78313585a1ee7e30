"""The cleanroom: the task's start state, built fresh from the base image."""
