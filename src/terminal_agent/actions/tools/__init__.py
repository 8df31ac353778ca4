"""actions/tools"""
