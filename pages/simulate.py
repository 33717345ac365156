import streamlit as st
st.title("Simulate")
