"""The edges of gpubot: the command line and the Slack app. They translate; handlers and knowledge decide."""
