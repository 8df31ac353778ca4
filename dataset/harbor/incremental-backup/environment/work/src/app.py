app
