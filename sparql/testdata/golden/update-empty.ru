# an empty request is valid
PREFIX : <http://ex/>
